import sys,re
# per function: ymm moves to/from the stack, vector arith, loads
for f in sys.argv[1:]:
    fn=None; st={}
    for line in open(f):
        m=re.match(r'^[0-9a-f]+ <(.*)>:',line)
        if m: fn=m.group(1); st[fn]=[0,0,0,0]; continue
        if fn is None or '\t' not in line: continue
        ins=line.split('\t',1)[1].strip()
        if 'ymm' in ins and ('(%rsp)' in ins or '(%rbp)' in ins): st[fn][0]+=1
        if re.match(r'v(add|sub|mul|fmadd|fnmadd|fmsub)\w*ps',ins) and 'ymm' in ins: st[fn][1]+=1
        if 'ymm' in ins and re.match(r'vmov|vbroadcast|vinsert|vgather',ins): st[fn][2]+=1
        if 'gather' in ins: st[fn][3]+=1
    for k,v in st.items(): print(f.split('/')[-1], k, 'stack_ymm=%d arith=%d movs=%d gathers=%d'%tuple(v))
