// The small sign of a live view: whether it follows the changes saved elsewhere (live.ts).

import type { LiveState } from './live';

const TEXT: Record<LiveState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  off: 'Not live',
};

const TITLE: Record<LiveState, string> = {
  connecting: 'Starting to follow the changes saved elsewhere',
  live: 'Changes saved elsewhere show here as they happen',
  reconnecting: 'The changes saved elsewhere will show again once the connection is back',
  off: 'Changes saved elsewhere do not show here: read again to see them',
};

export function LiveBadge(props: { state: LiveState; detail?: string }) {
  const title = props.detail ? `${TITLE[props.state]} (${props.detail})` : TITLE[props.state];
  // (polite: a lost connection is told, without taking over; not a role=status, which the forms' own messages are)
  return <span class={`live live-${props.state}`} aria-live="polite" title={title} data-testid="live-state" data-state={props.state}>{TEXT[props.state]}</span>;
}
