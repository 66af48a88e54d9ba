"""Presentation shared by the commands' pages: the plots (PNG, Agg)."""
