/** The page's keymap, on the document, quiet in dialogs, text fields and menus (and for Enter and Space, on buttons and links). */
import { useEffect, useRef } from 'react';
import { isDialogOpen } from '../lib/dialogs';

export interface KeyInfo {
  readonly shift: boolean;
  /** Ctrl, or Cmd on macOS. */
  readonly mod: boolean;
  readonly alt: boolean;
}

/** By KeyboardEvent.key; a handler returns false when it did not use the key, else the default is prevented. */
export type Keymap = Readonly<Record<string, (info: KeyInfo, event: KeyboardEvent) => boolean | void>>;

const EDITABLE = 'input, textarea, select, [contenteditable=""], [contenteditable="true"]';
const ACTIVATES = 'button, a[href], summary, [role="button"], [role="menuitem"], [role="link"]';

export function keyIgnored(event: KeyboardEvent): boolean {
  if (event.defaultPrevented || event.isComposing || isDialogOpen()) return true;
  const target = event.target instanceof Element ? event.target : null;
  if (!target) return false;
  if (target.closest(EDITABLE) || target.closest('[role="menu"], dialog')) return true;
  if ((event.key === 'Enter' || event.key === ' ') && target.closest(ACTIVATES)) return true;
  return false;
}

export function useKeymap(keymap: Keymap, enabled = true): void {
  // The latest bindings, without re-attaching the listener on every render.
  const latest = useRef(keymap);
  latest.current = keymap;

  useEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (keyIgnored(event)) return;
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      const handler = latest.current[key];
      if (!handler) return;
      const used = handler({ shift: event.shiftKey, mod: event.ctrlKey || event.metaKey, alt: event.altKey }, event);
      if (used !== false) event.preventDefault();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [enabled]);
}
