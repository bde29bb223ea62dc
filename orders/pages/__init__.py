"""The visitor's pages, opened by signed links without an account: the order's cancel page
(`cancel`) and its tickets' PDF (`tickets`). Faces over the sale's services, as the desk is."""
