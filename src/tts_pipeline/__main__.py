"""``python -m tts_pipeline <stage> ...``"""

from tts_pipeline.cli import main

if __name__ == "__main__":
    main()
