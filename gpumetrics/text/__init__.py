"""Text metrics, one file per family: qa.py, edit.py, bleu.py, rouge.py, cider.py, meteor/, codebleu/."""
