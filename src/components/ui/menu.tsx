/** A menu of actions (WAI-ARIA menu button), opened from a button or at the pointer; focus goes back to where it came from. */
import { useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { Icon, type IconName } from './icons';

export interface MenuAction {
  readonly id: string;
  readonly label: string;
  readonly icon?: IconName;
  readonly onSelect: () => void;
  readonly disabled?: boolean;
  readonly danger?: boolean;
  /** A hint such as "F2", shown beside the label. */
  readonly shortcut?: string;
  /** Why the action is disabled, or more about it: the item's tooltip and accessible description. */
  readonly hint?: string;
}

export type MenuAnchor = { readonly element: HTMLElement } | { readonly x: number; readonly y: number };

export interface MenuProps {
  readonly label: string;
  readonly actions: readonly MenuAction[];
  readonly anchor: MenuAnchor;
  readonly onClose: () => void;
  readonly id?: string;
}

export function Menu({ label, actions, anchor, onClose, id }: MenuProps) {
  const ref = useRef<HTMLDivElement>(null);
  const [position, setPosition] = useState<{ left: number; top: number } | null>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  const close = useRef(onClose);
  close.current = onClose;

  useLayoutEffect(() => {
    const menu = ref.current;
    if (!menu) return;
    const { width, height } = menu.getBoundingClientRect();
    let left: number;
    let top: number;
    if ('element' in anchor) {
      const box = anchor.element.getBoundingClientRect();
      left = box.right - width;
      top = box.bottom + 4;
      if (top + height > window.innerHeight - 8) top = box.top - height - 4;
    } else {
      left = anchor.x;
      top = anchor.y;
    }
    left = Math.max(8, Math.min(left, window.innerWidth - width - 8));
    top = Math.max(8, Math.min(top, window.innerHeight - height - 8));
    setPosition({ left, top });
  }, [anchor]);

  useEffect(() => {
    returnTo.current = 'element' in anchor ? anchor.element : document.activeElement instanceof HTMLElement ? document.activeElement : null;
    ref.current?.querySelector<HTMLElement>('[role="menuitem"]:not([aria-disabled="true"])')?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (ref.current?.contains(event.target as Node)) return;
      if ('element' in anchor && anchor.element.contains(event.target as Node)) return;
      close.current();
    };
    document.addEventListener('pointerdown', onPointerDown, true);
    return () => document.removeEventListener('pointerdown', onPointerDown, true);
  }, [anchor]);

  const closeAndReturn = () => {
    onClose();
    returnTo.current?.focus();
  };

  const items = () => [...(ref.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const all = items();
    const index = all.indexOf(document.activeElement as HTMLElement);
    const focus = (next: number) => all[(next + all.length) % all.length]?.focus();
    switch (event.key) {
      case 'ArrowDown':
        focus(index + 1);
        break;
      case 'ArrowUp':
        focus(index - 1);
        break;
      case 'Home':
        focus(0);
        break;
      case 'End':
        focus(all.length - 1);
        break;
      case 'Escape':
        closeAndReturn();
        break;
      case 'Tab':
        onClose();
        return;
      default:
        return;
    }
    event.preventDefault();
    event.stopPropagation();
  };

  const run = (action: MenuAction) => {
    if (action.disabled) return;
    closeAndReturn();
    action.onSelect();
  };

  return createPortal(
    <div
      ref={ref}
      id={id}
      role="menu"
      aria-label={label}
      onKeyDown={onKeyDown}
      // Measured before it is placed: transparent, not hidden, so that its first item can take focus.
      style={{ left: position?.left ?? 0, top: position?.top ?? 0, opacity: position ? 1 : 0 }}
      className="fixed z-50 min-w-48 rounded-md border border-gray-200 bg-white py-1 text-sm shadow-lg dark:border-gray-700 dark:bg-gray-900"
    >
      {actions.map((action) => (
        <div
          key={action.id}
          role="menuitem"
          tabIndex={-1}
          aria-disabled={action.disabled || undefined}
          title={action.hint}
          onClick={() => run(action)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' || event.key === ' ') {
              event.preventDefault();
              run(action);
            }
          }}
          className={
            'flex cursor-pointer items-center gap-3 px-3 py-2 outline-none focus:bg-blue-50 aria-disabled:cursor-not-allowed aria-disabled:text-gray-500 dark:focus:bg-gray-800 dark:aria-disabled:text-gray-400 ' +
            (action.danger ? 'text-red-700 dark:text-red-300' : 'text-gray-900 dark:text-gray-100')
          }
        >
          {action.icon && <Icon name={action.icon} className="size-4" />}
          <span className="flex-1">{action.label}</span>
          {action.shortcut && <kbd className="font-sans text-xs text-gray-600 dark:text-gray-400">{action.shortcut}</kbd>}
        </div>
      ))}
    </div>,
    document.body,
  );
}

export function MenuButton({
  label,
  actions,
  children,
  className = '',
}: {
  readonly label: string;
  readonly actions: readonly MenuAction[];
  readonly children: ReactNode;
  readonly className?: string;
}) {
  const [anchor, setAnchor] = useState<MenuAnchor | null>(null);
  const menuId = useId();
  return (
    <>
      <button
        type="button"
        aria-haspopup="menu"
        aria-expanded={anchor !== null}
        aria-controls={anchor ? menuId : undefined}
        onClick={(event) => setAnchor(anchor ? null : { element: event.currentTarget })}
        className={className}
      >
        {children}
      </button>
      {anchor && <Menu id={menuId} label={label} actions={actions} anchor={anchor} onClose={() => setAnchor(null)} />}
    </>
  );
}
