/**
 * How many modal dialogs are open. The keymap reads it and ignores keys while any is, so that
 * Delete in a dialog's text field never deletes the selection behind it.
 */
let open = 0;

/** Called by a dialog when it opens; the returned function is called when it closes. */
export function registerOpenDialog(): () => void {
  open++;
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    open--;
  };
}

export function isDialogOpen(): boolean {
  return open > 0;
}
