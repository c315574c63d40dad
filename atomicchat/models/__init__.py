"""Model manager (Qt-free): catalog, hardware fit, downloads into the HF cache, installed registry.

Importing this package loads nothing heavy; each module imports huggingface_hub / llama_cpp only
when a call needs them. What the GUI uses (all blocking calls belong on a worker thread):

    from atomicchat.models import catalog, hardware, fit, downloads, registry

    cat  = catalog.load_catalog()                  # pinned resources/catalog.json + last refresh
    pair = cat.pairs[0]                            # ModelPair: .target/.draft ModelSpec, .quants
    cat  = catalog.refresh(cat)                    # network: exact sizes + sha256 from the Hub
    hw   = hardware.probe()                        # RAM, free disk, llama.cpp GPU devices + VRAM
    est  = fit.estimate(pair, "Q4_K_M", n_ctx=8192, hardware=hw)
    est.verdict, est.label, est.message, est.breakdown()   # "fits in VRAM" / "... RAM, slower" / "won't fit"
    job  = downloads.DownloadJob(pair, "Q4_K_M", "Q8_0")   # target + draft as one job
    res  = job.run(progress_cb, cancel_event)      # Progress events; DownloadCancelled on cancel
    reg  = registry.Registry()
    reg.pairs()                                    # runnable InstalledPair(target, draft, pair_id)
    reg.import_gguf(path)                          # ImportResult; pairs only matching vocabularies
    reg.remove(key)                                # frees blob + snapshot link in the HF cache

Every failure is a subclass of `errors.ModelsError` whose text is a sentence for the user
(engine.errors.EngineError for a GGUF that fails validation on import).

The GUI goes through one typed facade, `service.ModelService`, which raises nothing but
`ModelsError` (`errors.as_models_error` translates the rest, EngineError as InvalidModelError).
"""
