## HIFIGAN: the vocoder, trained on ground-truth audio (its input mels come from the one mel function),
## then fine-tuned on FastPitch's teacher-forced mels of the same clips.


rule train_hifigan:
    message:
        "train_hifigan: HiFi-GAN on the recordings (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        **pipeline.warm_start("hifigan"),
        **pipeline.vocoder_pitch(),
    output:
        model=paths.hifigan_model,
        metrics=paths.hifigan_metrics,
        state=paths.hifigan_state,
    params:
        section=pipeline.params("train_hifigan"),
        code=pipeline.code("train_hifigan"),
        manifest_dir=pipeline.input_folder("train"),
        work_dir=paths.work("train_hifigan"),
        warm_start=pipeline.optional_input_option("--warm-start", "init_from"),
        pitch=pipeline.optional_input_option("--pitch-features", "pitch_features"),
    resources:
        gpu=pipeline.gpus("train_hifigan"),
        **pipeline.job_resources("train_hifigan"),
    log:
        paths.log("train_hifigan"),
    benchmark:
        paths.benchmark("train_hifigan")
    threads: pipeline.threads("train_hifigan", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        # One process per GPU Snakemake granted (resources.gpu, capped by --resources gpu=N), under
        # torchrun; a single CPU process when it is 0. Accumulation keeps the global batch fixed.
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " train-hifigan --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --work-dir {params.work_dir:q} --model {output.model:q} --metrics {output.metrics:q}"
        " --state {output.state:q} {params.warm_start:q} {params.pitch:q} 2> {log:q}"


rule finetune_hifigan:
    message:
        "finetune_hifigan: HiFi-GAN on FastPitch's mels (log: {log})"
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        **pipeline.hifigan_init(),
        mels=paths.fastpitch_mels_index,
        **pipeline.vocoder_pitch(),
    output:
        model=paths.hifigan_finetuned_model,
        metrics=paths.hifigan_finetuned_metrics,
    params:
        section=pipeline.params("finetune_hifigan"),
        code=pipeline.code("finetune_hifigan"),
        manifest_dir=pipeline.input_folder("train"),
        work_dir=paths.work("finetune_hifigan"),
        fastpitch_mels_dir=pipeline.input_folder("mels"),
        init_discriminators=pipeline.optional_input_option("--init-discriminators", "discriminators"),
        pitch=pipeline.optional_input_option("--pitch-features", "pitch_features"),
    resources:
        gpu=pipeline.gpus("finetune_hifigan"),
        **pipeline.job_resources("finetune_hifigan"),
    log:
        paths.log("finetune_hifigan"),
    benchmark:
        paths.benchmark("finetune_hifigan")
    threads: pipeline.threads("finetune_hifigan", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        # Reads the base checkpoint (never writes it), trains hifigan.fine_tune_epochs on
        # (FastPitch mel, ground-truth audio) pairs; its checkpoints live in its own work folder.
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " train-hifigan --section {params.section:q} --manifest-dir {params.manifest_dir:q}"
        " --work-dir {params.work_dir:q} --model {output.model:q} --metrics {output.metrics:q}"
        " --init-from {input.init:q} {params.init_discriminators:q} --mels-dir {params.fastpitch_mels_dir:q}"
        " {params.pitch:q} 2> {log:q}"
