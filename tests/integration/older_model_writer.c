/* The model writer library of an older stacksage, as a copy left in a
 * shared folder next to a newer preload would be: its entry point has the
 * older interface's name and takes other arguments. Called, it aborts: the
 * preload must refuse it, not call it. */
#include <stdlib.h>

__attribute__((visibility("default"))) int stacksage_write_process_model(void) { abort(); }
