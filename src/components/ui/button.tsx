import type { ButtonHTMLAttributes, ReactNode } from 'react';
import { Icon, type IconName } from './icons';

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost';

const base =
  'inline-flex items-center justify-center gap-2 rounded-md text-sm font-medium transition-colors ' +
  'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 ' +
  'disabled:cursor-not-allowed disabled:opacity-60';

const variants: Record<Variant, string> = {
  primary: 'bg-blue-600 text-white hover:bg-blue-700 dark:bg-blue-500 dark:hover:bg-blue-400 dark:text-gray-950',
  secondary:
    'border border-gray-300 bg-white text-gray-900 hover:bg-gray-100 ' +
    'dark:border-gray-600 dark:bg-gray-800 dark:text-gray-100 dark:hover:bg-gray-700',
  danger: 'bg-red-700 text-white hover:bg-red-800 dark:bg-red-500 dark:text-gray-950 dark:hover:bg-red-400',
  ghost: 'text-gray-800 hover:bg-gray-200 dark:text-gray-100 dark:hover:bg-gray-800',
};

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  readonly variant?: Variant;
  /** Shows the busy state: disabled, aria-busy, and `busyLabel` instead of the children. */
  readonly busy?: boolean;
  readonly busyLabel?: string;
  readonly compact?: boolean;
  /** Drawn before the label (and, as the label is, replaced by `busyLabel`). */
  readonly icon?: IconName;
}

export function Button({
  variant = 'primary',
  busy = false,
  busyLabel,
  compact = false,
  icon,
  className = '',
  disabled,
  children,
  type = 'button',
  ...rest
}: ButtonProps) {
  const showsBusyLabel = busy && busyLabel;
  return (
    <button
      type={type}
      className={`${base} ${compact ? 'px-2.5 py-1.5' : 'px-4 py-2'} ${variants[variant]} ${className}`}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy && <Spinner />}
      {icon && !showsBusyLabel && <Icon name={icon} className="size-4" />}
      {showsBusyLabel ? busyLabel : children}
    </button>
  );
}

/** A toolbar button; selection-only buttons are iconOnly, so that selecting never makes the toolbar wrap and push the list down. */
export function ToolButton({
  icon,
  label,
  variant = 'secondary',
  wide = false,
  iconOnly = false,
  ...rest
}: { readonly icon: IconName; readonly label: ReactNode; readonly wide?: boolean; readonly iconOnly?: boolean } & Omit<ButtonProps, 'children'>) {
  const labelClass = wide ? '' : iconOnly ? 'sr-only' : 'sr-only lg:not-sr-only';
  return (
    <Button icon={icon} variant={variant} compact title={!wide && typeof label === 'string' ? label : undefined} {...rest}>
      <span className={labelClass}>{label}</span>
    </Button>
  );
}

export function Spinner({ className = '' }: { readonly className?: string }) {
  return (
    <span
      aria-hidden="true"
      className={`inline-block size-4 animate-spin rounded-full border-2 border-current border-r-transparent ${className}`}
    />
  );
}
