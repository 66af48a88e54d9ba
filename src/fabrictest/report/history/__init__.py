"""`fabric-report history`: change points and sustained shifts over the stored sessions."""
