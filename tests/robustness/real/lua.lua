-- SPDX-License-Identifier: MIT
-- Lua table and string churn: many small tables, long concatenated
-- strings, sorting and a garbage collection each round; prints checksums.
local sum = 0
local keep = {}
for round = 1, 40 do
  local t = {}
  for i = 1, 5000 do
    t[i] = { id = i * round, name = string.rep(string.char(97 + i % 26), i % 300), list = {} }
    for j = 1, i % 7 do t[i].list[j] = tostring(i * j) end
  end
  table.sort(t, function(a, b) return #a.name < #b.name or (#a.name == #b.name and a.id < b.id) end)
  local parts = {}
  for i = 1, #t, 50 do parts[#parts + 1] = t[i].name:sub(1, 20) .. #t[i].list end
  local s = table.concat(parts, "|")
  keep[round % 5] = s
  for i = 1, #s, 97 do sum = (sum * 31 + s:byte(i)) % 1000000007 end
  collectgarbage()
end
print("checksum", sum, #keep[0], #keep[4])
