-- wrk script for benches/swap/run.sh: a mix of endpoints over many lists,
-- every request uncached (cache=fresh).
-- A mix of endpoints over many accounts (names resolved by the server).
local paths = {}
local names = {"erin", "peggy", "gwei", "ape", "olivia", "vitalik"}
math.randomseed(42)
for i = 1, 2000 do
  local list = math.random(1, 900000)
  local r = math.random(1, 6)
  if r == 1 then paths[i] = "/api/v1/lists/" .. list .. "/details"
  elseif r == 2 then paths[i] = "/api/v1/lists/" .. list .. "/followers?sort=latest"
  elseif r == 3 then paths[i] = "/api/v1/lists/" .. list .. "/followers?sort=followers&offset=10"
  elseif r == 4 then paths[i] = "/api/v1/lists/" .. list .. "/badges"
  elseif r == 5 then paths[i] = "/api/v1/leaderboard/search?term=" .. names[math.random(1, #names)] .. math.random(1, 99)
  else paths[i] = "/api/v1/lists/" .. list .. "/details?cache=fresh" end
end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", paths[(n % #paths) + 1] .. ((paths[(n % #paths) + 1]):find("?") and "&" or "?") .. "cache=fresh")
end
