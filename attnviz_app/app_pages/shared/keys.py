"""Session-state keys that more than one page reads or writes. A key that only its own page uses
stays in that page, beside its widget."""

EXPLORE_TEXT = "explore_text"  # str: Explore's source sentence; Compare starts from it, Train offers it as a probe
EXPLORE_TASK = "explore_task"  # str: the task Explore shows; Train offers its sentence to data in its language
EXPLORE_VIEW = "explore_view"  # str: Explore's open view ("Weights", ..., "Difference"); its tabs are fed from it
EXPLORE_MODELS = "explore_models"  # list[str]: the models Explore shows; Compare and Evaluate open on them
TRAIN_RETRAIN = "train_retrain"  # model path: Explore's Training view asks Train to retrain it from its recipe
TRAIN_SIBLING = "train_sibling"  # (model path, style): Explore's "train the missing sibling" asks Train for it
TRAIN_WANTED = "train_wanted"  # (task, score, style): Explore's "Train it" for a score no model of the task has
SHARED_UPLOAD = "upload_shared"  # a data_ui.SharedUpload: one upload for the Data and Train pages
UPLOAD_SPEC = "upload_spec"  # (data spec with its columns, file name): the upload's pairs, offered by Compare
FILE_NAMES = "attnviz_file_names"  # {stored upload path: the name the user gave the file}: every page's messages
