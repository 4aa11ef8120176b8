"""Code generators that turn the kernel-level IR into something that runs."""
