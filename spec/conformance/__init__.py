"""``make verify`` and its conformance report: :mod:`.verify` runs the steps, :mod:`.pytest_plugin`
collects which test checked which clause (:mod:`.clauses`, :mod:`.contract_names`), :mod:`.report`
prints it; :mod:`.mutation` is ``make mutation``'s run and its explained survivors."""
