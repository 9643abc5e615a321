## INFERENCE: text to speech with FastPitch and the vocoder of inference.vocoder (a kind of config/model_kinds.py)


rule synthesize:
    message:
        "synthesize: speech from the phrases (log: {log})"
    input:
        fastpitch=pipeline.fastpitch_model(),
        vocoder=pipeline.synthesis_vocoder(),
        phrases=pipeline.inference_phrases(),
    output:
        manifest=paths.inference_manifest,
    params:
        section=pipeline.params("synthesize"),
        code=pipeline.code("synthesize"),
        out_dir=pipeline.output_folder("manifest"),
    resources:
        gpu=pipeline.gpus("synthesize"),
        **pipeline.job_resources("synthesize"),
    log:
        paths.log("synthesize"),
    benchmark:
        paths.benchmark("synthesize")
    threads: pipeline.threads("synthesize", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        # <name>.wav beside the manifest, which is written last (the declared output).
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --"
        " tts-pipeline synthesize --section {params.section:q} --fastpitch {input.fastpitch:q}"
        " --vocoder {input.vocoder:q} --phrases {input.phrases:q} --out-dir {params.out_dir:q}"
        " --manifest {output.manifest:q} 2> {log:q}"
