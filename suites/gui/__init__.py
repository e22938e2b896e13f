"""The GUI judging suite: Writer, Calc and Impress tasks recorded on real LibreOffice desktops by
scripted agents, labelled by each task's verifier on the document a separate replay saved."""
