"""AI QA Lab: the project package and the lowest layer (settings, domain types, org context, LLM).

Importing it loads nothing: the Celery app lives in `qalab.celery` and is loaded when Django
starts (`QalabConfig.ready`) or by a worker (`celery -A qalab.celery worker`), so the pure
layers above (`generator`, `judge`) import `qalab.domain` and `qalab.llm` without Django or Celery.
"""
