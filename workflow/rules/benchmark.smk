## BENCHMARK: inference speed like NVIDIA measures it, objective quality, training throughput;
## then the pages of the HTML report (`snakemake --report`).


rule benchmark:
    message:
        "benchmark: speed, quality and intelligibility (log: {log})"
    input:
        **pipeline.training_metrics(),
        fastpitch=pipeline.fastpitch_model(),
        hifigan=paths.hifigan_finetuned_model,
        hifigan_base=pipeline.hifigan_model(),
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        test=paths.manifest("test"),
        features=paths.features_index,
        fastpitch_mels=paths.fastpitch_mels_index,
        inference=paths.inference_manifest,
        phrases=pipeline.benchmark_phrases(),
        **pipeline.other_vocoders(),
        **pipeline.other_acoustic_models(),
    output:
        json=paths.benchmark_json,
        md=paths.benchmark_md,
    params:
        section=pipeline.params("benchmark"),
        code=pipeline.code("benchmark"),
        manifest_dir=pipeline.input_folder("val"),
        features_dir=pipeline.input_folder("features"),
        fastpitch_mels_dir=pipeline.input_folder("fastpitch_mels"),
        out_dir=pipeline.output_folder("json"),
        reference=pipeline.benchmark_reference(),
        metrics=pipeline.metrics_arguments(),
        vocoders=pipeline.other_vocoders_option(),
        acoustic_models=pipeline.other_acoustic_models_option(),
    resources:
        gpu=pipeline.gpus("benchmark"),
        **pipeline.job_resources("benchmark"),
    log:
        paths.log("benchmark"),
    benchmark:
        paths.benchmark("benchmark")
    threads: pipeline.threads("benchmark", 2)
    conda:
        "../envs/tts.yaml"
    shell:
        "OMP_NUM_THREADS={threads} tts-pipeline lease-gpus --count {resources.gpu} --"
        " tts-pipeline benchmark --section {params.section:q} --fastpitch {input.fastpitch:q}"
        " --hifigan {input.hifigan:q} --hifigan-base {input.hifigan_base:q}"
        " --manifest-dir {params.manifest_dir:q} --features-dir {params.features_dir:q}"
        " --fastpitch-mels-dir {params.fastpitch_mels_dir:q} --inference-manifest {input.inference:q}"
        " --reference {params.reference:q} --phrases {input.phrases:q} --metrics {params.metrics:q} --out-dir {params.out_dir:q}"
        " {params.vocoders:q} {params.acoustic_models:q} 2> {log:q}"


rule report_pages:
    message:
        "report_pages: the report's pages (log: {log})"
    input:
        **pipeline.training_metrics(),
        benchmark=paths.benchmark_md,
        benchmark_json=paths.benchmark_json,
        inference=paths.inference_manifest,
        val=paths.manifest("val"),
        features=paths.features_index,
        durations=paths.durations_index,
        fastpitch_mels=paths.fastpitch_mels_index,
        hifigan_base=pipeline.hifigan_model(),
        hifigan=paths.hifigan_finetuned_model,
        **pipeline.other_vocoders(),
    output:
        losses=report(paths.report_page("losses.png"), caption="../report/losses.rst", category="Training"),
        pitch=report(paths.report_page("pitch.png"), caption="../report/pitch.rst", category="Features"),
        alignment=report(paths.report_page("alignment.png"), caption="../report/alignment.rst", category="Features"),
        benchmark=report(paths.report_page("benchmark.html"), caption="../report/benchmark.rst", category="Benchmark"),
        # One report item per clip page (a browser shows an embedded item only under about 1.5 MB).
        audio=report(
            directory(paths.report_page("audio")),
            patterns=["{group}/{clip}.html"],
            caption="../report/audio.rst",
            category="Audio",
            subcategory="{group}",
            labels={"clip": "{clip}"},
        ),
    params:
        code=pipeline.code("report_pages"),
        features_dir=pipeline.input_folder("features"),
        fastpitch_mels_dir=pipeline.input_folder("fastpitch_mels"),
        out_dir=pipeline.output_folder("losses"),
        metrics=pipeline.metrics_arguments(),
        vocoders=pipeline.other_vocoders_option(),
    resources:
        **pipeline.job_resources("report_pages"),
    log:
        paths.log("report_pages"),
    benchmark:
        paths.benchmark("report_pages")
    threads: pipeline.threads("report_pages", 1)
    conda:
        "../envs/tts.yaml"
    shell:
        "tts-pipeline report-pages --metrics {params.metrics:q} --features-dir {params.features_dir:q}"
        " --benchmark-md {input.benchmark:q} --benchmark-json {input.benchmark_json:q} --inference-manifest {input.inference:q} --val-manifest {input.val:q}"
        " --fastpitch-mels-dir {params.fastpitch_mels_dir:q} --hifigan-base {input.hifigan_base:q}"
        " --hifigan-finetuned {input.hifigan:q} --out-dir {params.out_dir:q} {params.vocoders:q} 2> {log:q}"
