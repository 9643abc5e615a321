## INFERENCE: text to speech with the acoustic model of inference.acoustic_model (FastPitch or Tacotron 2) and
## the vocoder of inference.vocoder (kinds of config/model_kinds.py)


rule synthesize:
    message:
        "synthesize: speech from the phrases (log: {log})"
    input:
        acoustic_model=pipeline.synthesis_acoustic_model(),
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
        " tts-pipeline synthesize --section {params.section:q} --acoustic-model {input.acoustic_model:q}"
        " --vocoder {input.vocoder:q} --phrases {input.phrases:q} --out-dir {params.out_dir:q}"
        " --manifest {output.manifest:q} 2> {log:q}"
