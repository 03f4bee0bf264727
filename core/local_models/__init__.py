"""Language models on this computer: servers already running (Ollama, LM Studio, llama.cpp,
vLLM), recommended model files and whether they fit, downloading them safely, and importing a
model file the user already has. No network at import; nothing runs until asked.

* :mod:`core.local_models.discovery`: ``await find_local_servers()`` and ``profile_for``.
* :mod:`core.local_models.catalogue`: ``RECOMMENDED``, ``computer()``, ``fit()``.
* :mod:`core.local_models.download`: ``download_model()`` (pause/resume, checksum, repair).
* :mod:`core.local_models.files`: ``read_gguf``, ``import_model_file``, ``installed_models``,
  ``profile_for_file``.
"""
