## HIFIGAN: the vocoder, trained on ground-truth audio (its input mels come from the one mel function)


rule train_hifigan:
    input:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
    output:
        model=paths.hifigan_model,
        metrics=paths.hifigan_metrics,
    params:
        section=pipeline.params("train_hifigan"),
        code=pipeline.code("train_hifigan"),
        work_dir=paths.work("train_hifigan"),
    resources:
        gpu=pipeline.gpus("train_hifigan"),
    log:
        paths.log("train_hifigan"),
    benchmark:
        paths.benchmark("train_hifigan")
    threads: 4
    conda:
        "../envs/tts.yaml"
    shell:
        # One process per GPU Snakemake granted (resources.gpu, capped by --resources gpu=N), under
        # torchrun; a single CPU process when it is 0. Accumulation keeps the global batch fixed.
        "tts-pipeline lease-gpus --count {resources.gpu} --stage --"
        " train_hifigan --section {params.section:q} --manifest-dir $(dirname {input.train:q})"
        " --work-dir {params.work_dir:q} --model {output.model:q} --metrics {output.metrics:q}"
        " > {log:q} 2>&1"
