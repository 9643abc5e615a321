## FEATURES: log-mels and frame-level pitch for every utterance (a worker pool, restartable)


rule features:
    message:
        "features: mels and pitch of every clip (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        test=paths.manifest("test"),
    output:
        pitch_stats=paths.pitch_stats,
        index=paths.features_index,
    params:
        section=pipeline.params("features"),
        code=pipeline.code("features"),
        manifest_dir=pipeline.input_folder("train"),
        out_dir=pipeline.output_folder("index"),
    resources:
        **pipeline.job_resources("features"),
    log:
        paths.log("features"),
    benchmark:
        paths.benchmark("features")
    threads: pipeline.threads("features", 8)
    conda:
        "../envs/tts.yaml"
    shell:
        "tts-pipeline features --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --out-dir {params.out_dir:q} --pitch-stats {output.pitch_stats:q} --index {output.index:q}"
        " --workers {threads} 2> {log:q}"


## ALIGNER: the RAD-TTS / FastPitch 1.1 alignment model, trained on its own


rule train_aligner:
    message:
        "train_aligner: the RAD-TTS aligner (text-to-mel attention) (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        features=paths.features_index,
        **pipeline.warm_start("aligner"),
    output:
        model=paths.aligner_model,
        metrics=paths.aligner_metrics,
    params:
        section=pipeline.params("train_aligner"),
        code=pipeline.code("train_aligner"),
        manifest_dir=pipeline.input_folder("train"),
        features_dir=pipeline.input_folder("features"),
        work_dir=paths.work("train_aligner"),
        warm_start=pipeline.optional_input_option("--warm-start", "init_from"),
    resources:
        gpu=pipeline.gpus("train_aligner"),
        **pipeline.job_resources("train_aligner"),
    log:
        paths.log("train_aligner"),
    benchmark:
        paths.benchmark("train_aligner")
    threads: pipeline.threads("train_aligner", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        "tts-pipeline lease-gpus --count {resources.gpu} --"
        " tts-pipeline train-aligner --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --features-dir {params.features_dir:q} --work-dir {params.work_dir:q}"
        " --model {output.model:q} --metrics {output.metrics:q} {params.warm_start:q} 2> {log:q}"


## DURATIONS: per-symbol durations (MAS on the aligner, or TextGrids) and per-symbol pitch


rule durations:
    message:
        "durations: frames per symbol (log: {log})"
    input:
        **pipeline.durations_inputs(),
        train=paths.manifest("train"),
    output:
        index=paths.durations_index,
    params:
        section=pipeline.params("durations"),
        code=pipeline.code("durations"),
        manifest_dir=pipeline.input_folder("train"),
        features_dir=pipeline.input_folder("features"),
        aligner=pipeline.optional_input_option("--aligner", "aligner"),
        tacotron2=pipeline.optional_input_option("--tacotron2", "tacotron2"),
        batch_size=pipeline.durations_batch_size(),
    resources:
        **pipeline.job_resources("durations"),
    log:
        paths.log("durations"),
    benchmark:
        paths.benchmark("durations")
    threads: pipeline.threads("durations", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        "tts-pipeline durations --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --features-dir {params.features_dir:q} --corpus-record {input.corpus:q}"
        " {params.aligner:q} {params.tacotron2:q} --batch-size {params.batch_size:q}"
        " --index {output.index:q} 2> {log:q}"
