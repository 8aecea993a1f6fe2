const body = Buffer.alloc(10_000_000, 97)
const warm = Buffer.allocUnsafe(body.length + 100)
const t = { fresh: 0, warm: 0 }
for (let i = 0; i < 30; i++) {
  let s = performance.now(); const f = Buffer.allocUnsafe(body.length + 100); f.set(body, 100); t.fresh += performance.now() - s
  s = performance.now(); warm.set(body, 100); t.warm += performance.now() - s
}
console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, (v / 30).toFixed(2)])))
