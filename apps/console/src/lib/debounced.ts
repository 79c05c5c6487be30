import { useEffect, useState } from 'react'

/**
 * `value` once it has stopped changing for `ms`: a preview asks the server once a person pauses
 * typing, not at each key. Values are compared by their JSON, so an object rebuilt at each render
 * with the same content does not restart the wait.
 */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  const key = JSON.stringify(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(JSON.parse(key) as T), ms)
    return () => clearTimeout(timer)
  }, [key, ms])
  return settled
}
