"""Judges of the job's recipe and launch: model, batch, memory, context length, SGLang flags, secrets in argv."""
