import { useSyncExternalStore } from 'react'

// One theme rule for every page, the sign-in page included: the theme the person chose with the
// ☀/☾ button (remembered in this browser), or else the system's (prefers-color-scheme), followed
// live when the system switches. It is set on <html> before React renders anything (main.tsx),
// so no page ever shows in the other theme first.

export type Theme = 'dark' | 'light'

const storageKey = 'tracewell.theme'
const lightQuery = '(prefers-color-scheme: light)'
const listeners = new Set<() => void>()
/** The choice made on this page, for a browser that refuses storage (it then lasts until a reload). */
let pageChoice: Theme | null = null

/** The chosen theme, else the system's. */
function resolveTheme(stored: string | null, systemPrefersLight: boolean): Theme {
  if (stored === 'dark' || stored === 'light') return stored
  return systemPrefersLight ? 'light' : 'dark'
}

function storedChoice(): string | null {
  try {
    return localStorage.getItem(storageKey)
  } catch {
    return null
  }
}

function currentTheme(): Theme {
  return resolveTheme(storedChoice() ?? pageChoice, window.matchMedia?.(lightQuery).matches ?? false)
}

function apply(): void {
  document.documentElement.dataset.theme = currentTheme()
  for (const listener of listeners) listener()
}

/** Sets the theme on <html> and follows the system's from then on (while no choice is stored). */
export function startTheme(): void {
  apply()
  window.matchMedia?.(lightQuery).addEventListener('change', apply)
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** The ☀/☾ button: the other theme, remembered in this browser. */
export function ThemeToggle() {
  const theme = useSyncExternalStore(subscribe, currentTheme)
  const next: Theme = theme === 'dark' ? 'light' : 'dark'
  return (
    <button
      type="button"
      className="button ghost"
      aria-label={`Switch to the ${next} theme`}
      onClick={() => {
        pageChoice = next
        try {
          localStorage.setItem(storageKey, next)
        } catch {
          // Storage refused: the choice holds on this page only.
        }
        apply()
      }}
    >
      {theme === 'dark' ? '☀' : '☾'}
    </button>
  )
}
