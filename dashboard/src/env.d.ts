/** CSS imports are bundled by Vite. */
declare module '*.css';
