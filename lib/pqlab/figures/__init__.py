"""One shared plotting style and one function per paper figure."""
