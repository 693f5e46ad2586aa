"""`harness advise`: which style meets what a user needs (`needs`), with the evidence and the known fixes (`fixes`)."""
