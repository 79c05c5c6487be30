/**
 * A speech bubble naming the comments column: the word "Comments" did not fit a count column
 * beside the other ten at 1,440 px. The title gives the icon its accessible name.
 */
export function CommentsIcon() {
  return (
    <svg className="comments-icon" viewBox="0 0 24 24" width="15" height="15" role="img" aria-label="Comments" focusable="false">
      <title>Comments</title>
      <path d="M4 5.5A1.5 1.5 0 0 1 5.5 4h13A1.5 1.5 0 0 1 20 5.5v9a1.5 1.5 0 0 1-1.5 1.5H10l-4.5 4v-4h0A1.5 1.5 0 0 1 4 14.5z" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinejoin="round" />
    </svg>
  )
}
