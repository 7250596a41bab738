import { useId } from 'react';
import { Icon } from './icons';

/** A compact search box that filters a list already on screen ("Filter by name"). */
export function FilterField({
  label,
  value,
  onChange,
}: {
  readonly label: string;
  readonly value: string;
  readonly onChange: (value: string) => void;
}) {
  const id = useId();
  return (
    <div className="relative min-w-0 flex-1 sm:max-w-xs">
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <Icon name="search" className="pointer-events-none absolute top-1/2 left-2 size-4 -translate-y-1/2 text-gray-600 dark:text-gray-400" />
      <input
        id={id}
        type="search"
        value={value}
        placeholder={label}
        onChange={(event) => onChange(event.target.value)}
        className="block w-full rounded-md border border-gray-400 bg-white py-1.5 pr-2 pl-8 text-sm text-gray-900 placeholder:text-gray-600 focus-visible:border-blue-600 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-gray-500 dark:bg-gray-800 dark:text-gray-100 dark:placeholder:text-gray-400"
      />
    </div>
  );
}
