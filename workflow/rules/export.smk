## EXPORT: the voice as ONNX and TorchScript files plus its voice card, checked against the eager models


rule export_voice:
    message:
        "export_voice: the voice as ONNX and TorchScript, checked against the eager models (log: {log})"
    input:
        fastpitch=pipeline.fastpitch_model(),
        vocoder=pipeline.synthesis_vocoder(),
        texts=paths.manifest("val"),
    output:
        # voice.json is written last, only when every file matched its eager model
        **pipeline.export_outputs(),
    params:
        section=pipeline.params("export_voice"),
        code=pipeline.code("export_voice"),
        out_dir=pipeline.output_folder("voice"),
    resources:
        **pipeline.job_resources("export_voice"),
    log:
        paths.log("export_voice"),
    benchmark:
        paths.benchmark("export_voice")
    threads: pipeline.threads("export_voice", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        "OMP_NUM_THREADS={threads} tts-pipeline export-voice --section {params.section:q}"
        " --fastpitch {input.fastpitch:q} --vocoder {input.vocoder:q} --texts {input.texts:q}"
        " --out-dir {params.out_dir:q} 2> {log:q}"
