## WAVEGLOW: the optional second vocoder of FastPitch 1.0's path (NVIDIA's flow vocoder), trained on
## ground-truth audio. In the DAG when inference.vocoder is waveglow (or waveglow.checkpoint names a
## pretrained one, which replaces this rule): its row in config/model_kinds.py says so.
## `snakemake train_waveglow` trains it on request.


rule train_waveglow:
    message:
        "train_waveglow: WaveGlow on the recordings (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
    output:
        model=paths.waveglow_model,
        metrics=paths.waveglow_metrics,
    params:
        section=pipeline.params("train_waveglow"),
        code=pipeline.code("train_waveglow"),
        manifest_dir=pipeline.input_folder("train"),
        work_dir=paths.work("train_waveglow"),
    resources:
        gpu=pipeline.gpus("train_waveglow"),
        **pipeline.job_resources("train_waveglow"),
    log:
        paths.log("train_waveglow"),
    benchmark:
        paths.benchmark("train_waveglow")
    threads: pipeline.threads("train_waveglow", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        # One process per granted GPU under torchrun (a CPU process at 0); accumulation keeps the global batch.
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " train-waveglow --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --work-dir {params.work_dir:q} --model {output.model:q} --metrics {output.metrics:q} 2> {log:q}"
