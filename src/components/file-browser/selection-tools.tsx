import { useState } from 'react';
import { useI18n } from '../../i18n';
import { ToolButton } from '../ui/button';
import { Menu, MenuButton, type MenuAnchor } from '../ui/menu';
import { Icon } from '../ui/icons';
import type { ItemActions } from './item-actions';

/** The buttons for what is selected (rename, move, delete, download) and the "More actions" menu. */
export function SelectionTools({ actions, count }: { readonly actions: ItemActions; readonly count: number }) {
  const { t } = useI18n();
  return (
    <>
      {count > 0 && (
        <>
          <ToolButton icon="download" label={t.download} onClick={actions.download} iconOnly />
          {count === 1 && <ToolButton icon="pencil" label={t.rename} onClick={actions.rename} iconOnly />}
          <ToolButton icon="move" label={t.moveTo} onClick={actions.move} iconOnly />
          <ToolButton icon="trash" label={t.moveToBin} onClick={() => actions.remove(false)} iconOnly />
        </>
      )}
      <MenuButton
        label={t.moreActions}
        actions={actions.menu}
        className="inline-flex items-center rounded-md border border-gray-300 bg-white px-2.5 py-1.5 text-gray-900 hover:bg-gray-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 dark:border-gray-600 dark:bg-gray-800 dark:text-gray-100 dark:hover:bg-gray-700"
      >
        <Icon name="more" className="size-4" />
        <span className="sr-only">{t.moreActions}</span>
      </MenuButton>
    </>
  );
}

/** The menu a right-click on an item opens, at the pointer. */
export function useContextMenu(actions: ItemActions) {
  const { t } = useI18n();
  const [anchor, setAnchor] = useState<MenuAnchor | null>(null);
  const element = anchor ? <Menu label={t.selectionActions} actions={actions.menu} anchor={anchor} onClose={() => setAnchor(null)} /> : null;
  return { element, openAt: (x: number, y: number) => setAnchor({ x, y }) };
}
