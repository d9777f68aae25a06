"""The Simple Office add-on's code: one module per format, and ``files`` for what they
share (paths inside the project, bounds on hostile documents, reviewed saves)."""
