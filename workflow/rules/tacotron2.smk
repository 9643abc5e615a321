## TACOTRON 2: FastPitch 1.0's source of durations (durations.source: tacotron2); its teacher-forced
## attention gives the durations. tacotron2.checkpoint (ours or NVIDIA's) replaces this rule.


rule train_tacotron2:
    message:
        "train_tacotron2: NVIDIA's Tacotron 2, for its attention (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        features=paths.features_index,
    output:
        model=paths.tacotron2_model,
        metrics=paths.tacotron2_metrics,
    params:
        section=pipeline.params("train_tacotron2"),
        code=pipeline.code("train_tacotron2"),
        manifest_dir=pipeline.input_folder("train"),
        features_dir=pipeline.input_folder("features"),
        work_dir=paths.work("train_tacotron2"),
    resources:
        gpu=pipeline.gpus("train_tacotron2"),
        **pipeline.job_resources("train_tacotron2"),
    log:
        paths.log("train_tacotron2"),
    benchmark:
        paths.benchmark("train_tacotron2")
    threads: pipeline.threads("train_tacotron2", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " train-tacotron2 --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --features-dir {params.features_dir:q} --work-dir {params.work_dir:q}"
        " --model {output.model:q} --metrics {output.metrics:q} 2> {log:q}"
