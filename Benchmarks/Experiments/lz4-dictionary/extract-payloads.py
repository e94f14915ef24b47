import sys, struct
data = open(sys.argv[1],'rb').read(64<<20)
n = int(sys.argv[2]); out = open(sys.argv[3],'wb')
def varint(p):
    v=0; s=0
    while True:
        b=data[p]; p+=1; v|=(b&0x7f)<<s; s+=7
        if b<0x80: return v,p
p=48; count=0
while count<n and p < len(data)-16:
    head=data[p]; p+=1
    _,p=varint(p); oid,p=varint(p); tag,p=varint(p); rc,p=varint(p); sl,p=varint(p)
    if head&0x80: _,p=varint(p)
    comp = head&8
    if comp: _,p=varint(p)
    for i in range(rc): _,p=varint(p)
    payload=data[p:p+sl]; p+=sl
    if head&0x10: p+=8
    p+=4
    if (head&7)==1 and not comp:
        out.write(struct.pack('<II',tag,len(payload))); out.write(payload); count+=1
print(count, p)
