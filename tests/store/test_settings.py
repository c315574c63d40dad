from atomicchat.store import AppSettings, baseline_key, open_store


def test_defaults_when_nothing_saved(tmp_path):
    s = open_store(tmp_path / "s.sqlite3")
    cfg = s.settings.load()
    assert cfg == AppSettings()
    assert cfg.use_draft is True and cfg.enable_thinking is False


def test_round_trip_and_clamping(tmp_path):
    path = tmp_path / "s.sqlite3"
    s = open_store(path)
    s.settings.save(AppSettings(system_prompt="Be terse.", temperature=9.0, top_k=5, n_ctx=8192, use_draft=False))
    s.close()
    cfg = open_store(path).settings.load()
    assert cfg.system_prompt == "Be terse." and cfg.top_k == 5 and cfg.n_ctx == 8192 and cfg.use_draft is False
    assert cfg.temperature == 2.0


def test_wrong_types_and_unknown_keys_fall_back(tmp_path):
    s = open_store(tmp_path / "s.sqlite3")
    s.db.conn.execute(
        """INSERT INTO settings VALUES ('top_k', '"many"'), ('use_draft', '1'), ('gone', '3'), ('n_ctx', 'xx')"""
    )
    cfg = s.settings.load()
    assert cfg.top_k == 40 and cfg.use_draft is True and cfg.n_ctx == 4096


def test_baseline_cache(tmp_path):
    s = open_store(tmp_path / "s.sqlite3")
    key = baseline_key("/m/a.gguf", 123, "CPU", 0)
    assert s.baselines.get(key) is None
    s.baselines.put(key, 41.5, "CPU")
    s.baselines.put(key, 42.0, "CPU")
    b = s.baselines.get(key)
    assert b.tokens_per_second == 42.0 and b.device == "CPU"
    assert s.baselines.get(baseline_key("/m/a.gguf", 124, "CPU", 0)) is None


def test_the_draft_confidence_cut_is_stored_clamped_and_reaches_each_reply(tmp_path):
    from atomicchat.engine.draft_confidence import DEFAULT_P_MIN
    from atomicchat.store.settings import MAX_P_MIN

    assert AppSettings().draft_p_min == DEFAULT_P_MIN
    path = tmp_path / "s.sqlite3"
    s = open_store(path)
    s.settings.save(AppSettings(draft_p_min=0.25))
    s.close()
    cfg = open_store(path).settings.load()
    assert cfg.draft_p_min == 0.25
    assert cfg.gen_params(use_draft=True, temperature=0, top_k=1, top_p=1, min_p=0).draft_p_min == 0.25
    assert cfg.engine_config(tmp_path / "t.gguf", tmp_path / "d.gguf").draft_p_min == 0.25  # the local API's
    assert AppSettings(draft_p_min=3.0).clamped().draft_p_min == MAX_P_MIN
    assert AppSettings(draft_p_min=-1.0).clamped().draft_p_min == 0.0
    assert AppSettings(draft_p_min=float("nan")).clamped().draft_p_min == DEFAULT_P_MIN
