import random, struct, sys
r = random.Random(42)
words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu report meeting invoice shipping delayed payment received".split()
def clip(s, n):
    b = s.encode()
    return b[:n] if len(b) >= n else b
def text(n): return " ".join(r.choice(words) for _ in range(n))
def user(i):
    return '{"uid":%d,"login":"%s%d","roles":["%s"],"created":"2026-%02d-%02dT%02d:%02d:00Z","prefs":{"theme":"%s","lang":"%s"},"about":"%s"}' % (i, r.choice(words), r.randrange(1000), r.choice(["admin","editor","viewer"]), r.randrange(1,13), r.randrange(1,29), r.randrange(24), r.randrange(60), r.choice(["dark","light"]), r.choice(["en","de","fr","ja"]), text(r.randrange(3,20)))
def order(i):
    items = ",".join('{"sku":"SKU-%05d","qty":%d,"price":%d.%02d}' % (r.randrange(100000), r.randrange(1,9), r.randrange(1,500), r.randrange(100)) for _ in range(r.randrange(1,5)))
    return '{"order":%d,"customer":%d,"status":"%s","items":[%s],"total":%d.%02d}' % (i, r.randrange(100000), r.choice(["open","paid","shipped","cancelled"]), items, r.randrange(2000), r.randrange(100))
def event(i):
    return '{"ts":%d,"level":"%s","source":"%s","message":"%s","trace":"%016x"}' % (1790000000000 + i*37, r.choice(["debug","info","warn","error"]), r.choice(["api","db","worker","auth"]), text(r.randrange(4,25)), r.getrandbits(64))
def shape(i):
    return '{"kind":"%s","frame":{"x":%.1f,"y":%.1f,"width":%.1f,"height":%.1f},"stroke":"#%06x","fill":"#%06x","lineWidth":%d,"label":"%s"}' % (r.choice(["rect","oval","line","text"]), r.uniform(0,2000), r.uniform(0,2000), r.uniform(1,500), r.uniform(1,500), r.getrandbits(24), r.getrandbits(24), r.randrange(1,6), text(r.randrange(0,6)))
gens=[user,order,event,shape]
out=open(sys.argv[1],'wb'); n=int(sys.argv[2])
for i in range(n):
    t=r.randrange(4); p=gens[t](i).encode()
    out.write(struct.pack('<II',t+1,len(p))); out.write(p)
