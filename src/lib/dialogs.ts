/** Open modal dialogs; the keymap ignores keys while any is, so Delete in a field never deletes the selection behind. */
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
