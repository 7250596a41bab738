import { useEffect, useRef, useState, type PointerEvent } from 'react';
import { useI18n } from '../../i18n';
import { ToolButton } from '../ui/button';

const MIN_SCALE = 0.05;
const MAX_SCALE = 16;
const STEP = 1.25;

/**
 * An image, fitted to the window until zoomed: buttons, the wheel (a trackpad's pinch is a wheel
 * with Ctrl), a two-finger pinch, and + / − / 0 on the keyboard. A zoomed image scrolls.
 */
export function ImageView({ url, name, onFail }: { readonly url: string; readonly name: string; readonly onFail: () => void }) {
  const { t } = useI18n();
  const image = useRef<HTMLImageElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const [scale, setScale] = useState<number | null>(null); // null: fit
  const [fit, setFit] = useState(1); // the scale of the fitted image, measured as it is laid out
  const pointers = useRef(new Map<number, { x: number; y: number }>());
  const pinch = useRef<{ distance: number; scale: number } | null>(null);

  const shown = () => scale ?? fit;
  const zoomTo = (next: number) => setScale(Math.min(MAX_SCALE, Math.max(MIN_SCALE, next)));
  const zoomBy = (factor: number) => zoomTo(shown() * factor);
  // The latest zoom for the listeners below, which are attached once.
  const latest = useRef(zoomBy);
  latest.current = zoomBy;

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === '+' || event.key === '=') latest.current(STEP);
      else if (event.key === '-') latest.current(1 / STEP);
      else if (event.key === '0') setScale(null);
      else return;
      event.preventDefault();
    };
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      latest.current(event.deltaY < 0 ? 1.1 : 1 / 1.1);
    };
    const element = stage.current;
    const img = image.current;
    const resized = new ResizeObserver(() => img?.naturalWidth && !img.style.width && setFit(img.clientWidth / img.naturalWidth));
    if (img) resized.observe(img);
    document.addEventListener('keydown', onKey);
    element?.addEventListener('wheel', onWheel, { passive: false });
    return () => {
      document.removeEventListener('keydown', onKey);
      element?.removeEventListener('wheel', onWheel);
      resized.disconnect();
    };
  }, []);

  const distance = () => {
    const [a, b] = [...pointers.current.values()];
    return Math.hypot(a.x - b.x, a.y - b.y);
  };
  const onPointerDown = (event: PointerEvent) => {
    if (event.pointerType !== 'touch') return;
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.current.size === 2) pinch.current = { distance: distance(), scale: shown() };
  };
  const onPointerMove = (event: PointerEvent) => {
    if (!pointers.current.has(event.pointerId)) return;
    pointers.current.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pinch.current && pointers.current.size === 2) zoomTo((pinch.current.scale * distance()) / pinch.current.distance);
  };
  const onPointerEnd = (event: PointerEvent) => {
    pointers.current.delete(event.pointerId);
    if (pointers.current.size < 2) pinch.current = null;
  };

  const width = scale !== null && image.current ? image.current.naturalWidth * scale : undefined;
  return (
    <>
      <div
        ref={stage}
        data-zoomed={scale !== null || undefined}
        // Fitted, a finger's moves are ours (a swipe, a pinch); zoomed, a finger pans.
        className={`flex min-h-0 flex-1 overflow-auto p-2 ${scale === null ? 'touch-none' : 'touch-pan-x touch-pan-y'}`}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerEnd}
        onPointerCancel={onPointerEnd}
      >
        <img
          ref={image}
          src={url}
          alt={name}
          draggable={false}
          onError={onFail}
          style={width === undefined ? undefined : { width, maxWidth: 'none', maxHeight: 'none' }}
          className="m-auto max-h-full max-w-full object-contain"
        />
      </div>
      <div role="group" aria-label={t.zoom} className="flex items-center justify-center gap-2 border-t border-gray-800 p-2">
        <ToolButton icon="zoomOut" label={t.zoomOut} iconOnly onClick={() => zoomBy(1 / STEP)} />
        <output aria-live="polite" className="min-w-14 text-center text-sm tabular-nums">
          {t.zoomLevel(Math.round(shown() * 100))}
        </output>
        <ToolButton icon="zoomIn" label={t.zoomIn} iconOnly onClick={() => zoomBy(STEP)} />
        <ToolButton icon="monitor" label={t.zoomFit} iconOnly aria-pressed={scale === null} onClick={() => setScale(null)} />
      </div>
    </>
  );
}
