"""One module per DVC stage, named as the stage; each ``run(settings, paths)`` is the only code writing its files.

| stage / module     | paper                      | notebook                          |
| ------------------ | -------------------------- | --------------------------------- |
| ``costs``          | AMORT-V1 §V-C, Table I, Fig. 2 | 01_cost_characterisation      |
| ``attack_matrix``  | AMORT-V1 Appendix A, Table VI  | 02_attack_matrix              |
| ``case_sizes``     | PQ-CASE §V, Table I, Fig. 1    | 03_case_sizes                 |
| ``design_space``   | PQ-CASE §VIII, Fig. 6          | 04_design_space               |
| ``transport``      | PQ-CASE §VI, Fig. 2            | 05_transport                  |
| ``amortisation``   | AMORT-V1 §V-D, Table II, Figs. 3-4 | 06_amortisation           |
| ``control_cycle``  | AMORT-V1 §V-G, Fig. 6          | 10_control_cycle              |
| ``image_tree``     | AMORT-V1 §V-I (the image)      | (``pqlab image-tree``)        |
| ``full_image``     | AMORT-V1 §V-I, Table V         | 11_full_image                 |
| ``sensitivity``    | PQ-CASE §VII, Fig. 4, Fig. 5   | 12_sensitivity                |
| ``assumptions``    | beyond the paper: §VI's unstated assumptions, slack bound | 13_assumptions |
| ``report``         | both: REPORT.md                | (``pqlab report``)            |
"""
