"""``spieltisch serve``: the web server and page (see :mod:`.app`)."""
