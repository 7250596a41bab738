import type { HTMLAttributes, ReactNode } from 'react';
import { Icon, type IconName } from '../ui/icons';

export function EmptyState({
  icon,
  title,
  children,
  highlighted = false,
  ...rest
}: {
  readonly icon: IconName;
  readonly title: string;
  readonly children?: ReactNode;
  readonly highlighted?: boolean;
} & HTMLAttributes<HTMLDivElement>) {
  return (
    <div
      {...rest}
      className={`flex flex-col items-center gap-2 rounded-md border-2 border-dashed p-8 text-center ${
        highlighted ? 'border-blue-500 bg-blue-50 dark:bg-blue-950' : 'border-gray-300 dark:border-gray-700'
      }`}
    >
      <Icon name={icon} className="size-10 text-gray-500 dark:text-gray-400" />
      <p className="font-medium text-gray-800 dark:text-gray-200">{title}</p>
      {children && <div className="text-sm text-gray-700 dark:text-gray-300">{children}</div>}
    </div>
  );
}
