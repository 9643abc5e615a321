## CORPUS: download LJSpeech, synthesise the demo corpus, or point at a local folder


rule corpus:
    message:
        "corpus: the recordings and their texts (log: {log})"
    output:
        record=paths.corpus_record,
    params:
        section=pipeline.params("corpus"),
        code=pipeline.code("corpus"),
        downloads=paths.downloads,
    resources:
        **pipeline.job_resources("corpus"),
    log:
        paths.log("corpus"),
    benchmark:
        paths.benchmark("corpus")
    threads: pipeline.threads("corpus", 1)
    conda:
        "../envs/tts.yaml"
    shell:
        "tts-pipeline corpus --section {params.section:q} --downloads {params.downloads:q}"
        " --record {output.record:q} 2> {log:q}"


## MANIFEST: normalise text, validate every utterance, split train / val / test


rule manifest:
    message:
        "manifest: checking every clip and splitting train / val / test (log: {log})"
    input:
        corpus=paths.corpus_record,
    output:
        train=paths.manifest("train"),
        val=paths.manifest("val"),
        test=paths.manifest("test"),
        validation=paths.validation,
    params:
        section=pipeline.params("manifest"),
        code=pipeline.code("manifest"),
        resampled=paths.resampled,
    resources:
        **pipeline.job_resources("manifest"),
    log:
        paths.log("manifest"),
    benchmark:
        paths.benchmark("manifest")
    threads: pipeline.threads("manifest", 4)
    conda:
        "../envs/tts.yaml"
    shell:
        "tts-pipeline manifest --section {params.section:q} --corpus {input.corpus:q}"
        " --validation {output.validation:q} --resampled-dir {params.resampled:q}"
        " --workers {threads} 2> {log:q}"
