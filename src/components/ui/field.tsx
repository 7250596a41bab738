import { forwardRef, useId, type InputHTMLAttributes } from 'react';

export const inputClass =
  'mt-1 block w-full rounded-md border border-gray-400 bg-white px-3 py-2 text-base text-gray-900 ' +
  'focus-visible:border-blue-600 focus-visible:outline-2 focus-visible:outline-blue-600 ' +
  'dark:border-gray-500 dark:bg-gray-800 dark:text-gray-100';

export const TextField = forwardRef<HTMLInputElement, { readonly label: string } & InputHTMLAttributes<HTMLInputElement>>(
  function TextField({ label, id, className = '', ...rest }, ref) {
    const generated = useId();
    const fieldId = id ?? generated;
    return (
      <div>
        <label htmlFor={fieldId} className="block text-sm font-medium">
          {label}
        </label>
        <input ref={ref} id={fieldId} className={`${inputClass} ${className}`} {...rest} />
      </div>
    );
  },
);

export const selectClass =
  'rounded-md border border-gray-400 bg-white py-1.5 pr-7 pl-2 text-sm text-gray-900 ' +
  'focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-gray-500 dark:bg-gray-800 dark:text-gray-100';
