"""``import opencompass_lveval.framework.register``: every class of the package and of each registered benchmark in OpenCompass's registries.

For configs that name classes by string, e.g. ``type='LVEvalDataset'`` after
``custom_imports = dict(imports=['opencompass_lveval.framework.register'])``.
"""

import opencompass_lveval

for _name in opencompass_lveval.all_classes():
    getattr(opencompass_lveval, _name)
