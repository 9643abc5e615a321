## FASTPITCH: the acoustic model, trained on the extracted durations and pitch, then run
## teacher-forced over every utterance to make the vocoder's fine-tuning mels.


rule train_fastpitch:
    message:
        "train_fastpitch: FastPitch (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        features=paths.features_index,
        durations=paths.durations_index,
        **pipeline.warm_start("fastpitch"),
    output:
        model=paths.fastpitch_model,
        metrics=paths.fastpitch_metrics,
    params:
        section=pipeline.params("train_fastpitch"),
        code=pipeline.code("train_fastpitch"),
        manifest_dir=pipeline.input_folder("train"),
        features_dir=pipeline.input_folder("features"),
        work_dir=paths.work("train_fastpitch"),
        warm_start=pipeline.optional_input_option("--warm-start", "init_from"),
    resources:
        gpu=pipeline.gpus("train_fastpitch"),
        **pipeline.job_resources("train_fastpitch"),
    log:
        paths.log("train_fastpitch"),
    benchmark:
        paths.benchmark("train_fastpitch")
    threads: pipeline.threads("train_fastpitch", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " train-fastpitch --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --features-dir {params.features_dir:q} --work-dir {params.work_dir:q}"
        " --model {output.model:q} --metrics {output.metrics:q} {params.warm_start:q} 2> {log:q}"


rule extract_fastpitch_mels:
    message:
        "extract_fastpitch_mels: teacher-forced FastPitch mels (log: {log})"
    input:
        train=paths.manifest("train"),
        features=paths.features_index,
        durations=paths.durations_index,
        model=pipeline.fastpitch_model(),
    output:
        index=paths.fastpitch_mels_index,
    params:
        section=pipeline.params("extract_fastpitch_mels"),
        code=pipeline.code("extract_fastpitch_mels"),
        manifest_dir=pipeline.input_folder("train"),
        features_dir=pipeline.input_folder("features"),
        out_dir=pipeline.output_folder("index"),
    resources:
        gpu=pipeline.gpus("extract_fastpitch_mels"),
        **pipeline.job_resources("extract_fastpitch_mels"),
    log:
        paths.log("extract_fastpitch_mels"),
    benchmark:
        paths.benchmark("extract_fastpitch_mels")
    threads: pipeline.threads("extract_fastpitch_mels", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        # Sharded: one process per granted GPU, each writing its share of <id>.npy; the index last.
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " extract-fastpitch-mels --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --features-dir {params.features_dir:q} --model {input.model:q}"
        " --out-dir {params.out_dir:q} --index {output.index:q} --threads {threads} 2> {log:q}"
