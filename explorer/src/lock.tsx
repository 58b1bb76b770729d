// The lock that marks what this session may not read (a dataclass, an attribute): an inline
// picture, since a font may have no emoji, hidden from screen readers (the text beside it says it).

export function Lock() {
  return (
    <svg class="lock-icon" aria-hidden="true" viewBox="0 0 16 16" width="14" height="14">
      <path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.6" />
      <rect x="3" y="7" width="10" height="7" rx="1.5" fill="currentColor" />
    </svg>
  );
}
