"""The report's pages: loss curves as Markdown tables (:mod:`.pages`) and audio clips embedded in
HTML pages (:mod:`.clips`), written by the ``report_pages`` stage for ``snakemake --report``."""
