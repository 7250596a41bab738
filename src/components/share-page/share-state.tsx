import { useId, type ReactNode } from 'react';
import { Icon, type IconName } from '../ui/icons';

const TONES = {
  neutral: 'bg-blue-50 text-blue-700 dark:bg-blue-950 dark:text-blue-300',
  warning: 'bg-amber-50 text-amber-800 dark:bg-amber-950 dark:text-amber-300',
  error: 'bg-red-50 text-red-700 dark:bg-red-950 dark:text-red-300',
} as const;

/** One state of the share page; its heading takes the focus when the page moves to it (share-page.tsx), so screen readers hear it. */
export function ShareState({
  icon,
  tone = 'neutral',
  title,
  children,
  actions,
  level = 1,
}: {
  readonly icon: IconName;
  readonly tone?: keyof typeof TONES;
  readonly title: string;
  readonly children?: ReactNode;
  readonly actions?: ReactNode;
  /** 2 where the page already has its heading (the share's name) above. */
  readonly level?: 1 | 2;
}) {
  const id = useId();
  const Heading = level === 1 ? 'h1' : 'h2';
  return (
    <section aria-labelledby={id} className="mx-auto flex w-full max-w-lg flex-col items-center gap-3 py-6 text-center sm:py-10">
      <span className={`flex size-14 items-center justify-center rounded-full ${TONES[tone]}`}>
        <Icon name={icon} className="size-7" />
      </span>
      <Heading id={id} tabIndex={-1} className="text-xl font-semibold text-balance outline-none sm:text-2xl">
        {title}
      </Heading>
      {children && <div className="space-y-2 text-gray-700 dark:text-gray-300">{children}</div>}
      {actions && <div className="mt-2 flex flex-wrap justify-center gap-2">{actions}</div>}
    </section>
  );
}
